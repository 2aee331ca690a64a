import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Admin calls a client may make without asking ApiVersions first; one JSON line per command, as
 * AdminScenario: {"cmd": ..., "ok": true, ...} or {"cmd": ..., "ok": false, "error": ExceptionClass, "message": ...}.
 *
 * <p>Usage: {@code UnpromptedApis BOOTSTRAP COMMAND ARG... [; COMMAND ARG...]...} with the commands
 * <pre>
 *   log-dirs NODE                 (describeLogDirs: each dir's error, volume bytes and replica sizes)
 *   describe-acls                 (describeAcls, the filter that matches every ACL)
 *   create-acl TOPIC              (createAcls: User:alice may READ TOPIC)
 *   delete-acls                   (deleteAcls, the filter that matches every ACL)
 *   sasl-list-topics              (listTopics from an Admin that speaks SASL_PLAINTEXT/PLAIN)
 * </pre>
 */
public final class UnpromptedApis {
    private final String bootstrap;
    private final Admin admin;

    private UnpromptedApis(String bootstrap, Admin admin) {
        this.bootstrap = bootstrap;
        this.admin = admin;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Records.baseConfig(bootstrap))) {
            UnpromptedApis apis = new UnpromptedApis(bootstrap, admin);
            Records.runCommands(args, 1, apis::run);
        }
    }

    private Map<String, Object> run(String[] c) throws Exception {
        switch (c[0]) {
            case "log-dirs": return logDirs(Integer.parseInt(c[1]));
            case "describe-acls":
                return Json.obj("acls", admin.describeAcls(AclBindingFilter.ANY).values().get().size());
            case "create-acl":
                AclBinding binding = new AclBinding(new ResourcePattern(ResourceType.TOPIC, c[1], PatternType.LITERAL),
                        new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
                admin.createAcls(List.of(binding)).all().get();
                return Json.obj();
            case "delete-acls":
                return Json.obj("deleted", admin.deleteAcls(List.of(AclBindingFilter.ANY)).all().get().size());
            case "sasl-list-topics": return saslListTopics();
            default: throw new IllegalArgumentException("unknown command " + c[0]);
        }
    }

    private Map<String, Object> logDirs(int node) throws Exception {
        Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(node)).allDescriptions().get().get(node);
        List<Object> out = new ArrayList<>();
        for (Map.Entry<String, LogDirDescription> dir : dirs.entrySet()) {
            LogDirDescription d = dir.getValue();
            Map<String, Object> replicas = new TreeMap<>();
            for (Map.Entry<TopicPartition, ReplicaInfo> r : d.replicaInfos().entrySet()) {
                replicas.put(r.getKey().toString(), Json.obj("size", r.getValue().size(),
                        "offset_lag", r.getValue().offsetLag(), "future", r.getValue().isFuture()));
            }
            out.add(Json.obj("path", dir.getKey(),
                    "error", d.error() == null ? null : d.error().getClass().getSimpleName(),
                    "total_bytes", d.totalBytes().isPresent() ? d.totalBytes().getAsLong() : null,
                    "usable_bytes", d.usableBytes().isPresent() ? d.usableBytes().getAsLong() : null,
                    "replicas", replicas));
        }
        return Json.obj("dirs", out);
    }

    private Map<String, Object> saslListTopics() throws Exception {
        Properties p = Records.baseConfig(bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "PLAIN");
        p.put("sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";");
        p.put("request.timeout.ms", "10000");
        p.put("default.api.timeout.ms", "10000");
        try (Admin sasl = Admin.create(p)) {
            return Json.obj("topics", sasl.listTopics().names().get().size());
        }
    }
}
