import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DeleteAclsResult;
import org.apache.kafka.clients.admin.DescribeUserScramCredentialsResult;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Runs ACL, SCRAM-credential and produce commands as one principal after another and prints one JSON
 * line per command: {"cmd": ..., "ok": true, ...results} or {"cmd": ..., "ok": false, "error":
 * ExceptionClass, "message": ...}. A failing command does not stop the following ones.
 *
 * <p>Usage: {@code AclScenario BOOTSTRAP COMMAND ARG... [; COMMAND ARG...]...} (commands separated by a
 * lone ";"). An ACL is written {@code TYPE,NAME,PATTERN,PRINCIPAL,HOST,OPERATION,PERMISSION}
 * (e.g. {@code TOPIC,orders,LITERAL,User:alice,*,WRITE,ALLOW}); a filter the same way, with
 * {@code -} for a null (any) name, principal or host and ANY / MATCH where Kafka allows them.
 * <pre>
 *   set NAME=VALUE...                 client settings for the next commands (a new Admin client then)
 *   create-acls ACL...                createAcls(...).all()
 *   describe-acls FILTER              {"acls": [ACL...]} sorted
 *   delete-acls FILTER...             {"deleted": [[ACL...] per filter]}, each sorted
 *   alter-scram CHANGE...             upsert,USER,MECHANISM,ITERATIONS,PASSWORD or delete,USER,MECHANISM;
 *                                     {"results": {USER: null or "ExceptionClass"}}
 *   describe-scram [USER...]          {"users": {USER: [{"mechanism", "iterations"}...] or "ExceptionClass"}}
 *   produce TOPIC COUNT PREFIX [NAME=VALUE...]   values PREFIX-0..; send().get() each; {"offsets": [...]}
 * </pre>
 */
public final class AclScenario {
    private final Properties settings;
    private Admin admin;

    private AclScenario(String bootstrap) {
        settings = Records.baseConfig(bootstrap);
    }

    public static void main(String[] args) {
        AclScenario scenario = new AclScenario(args[0]);
        try {
            Records.runCommands(args, 1, scenario::run);
        } finally {
            scenario.closeAdmin();
        }
    }

    private Map<String, Object> run(String[] c) throws Exception {
        switch (c[0]) {
            case "set":
                closeAdmin();
                settings.putAll(Records.options(c, 1));
                return Json.obj();
            case "create-acls": {
                List<AclBinding> acls = new ArrayList<>();
                for (int i = 1; i < c.length; i++) {
                    acls.add(binding(c[i]));
                }
                admin().createAcls(acls).all().get();
                return Json.obj();
            }
            case "describe-acls":
                return Json.obj("acls", written(admin().describeAcls(filter(c[1])).values().get()));
            case "delete-acls": return deleteAcls(c);
            case "alter-scram": return alterScram(c);
            case "describe-scram": return describeScram(c);
            case "produce": return produce(c[1], Integer.parseInt(c[2]), c[3], Records.options(c, 4));
            default: throw new IllegalArgumentException("unknown command " + c[0]);
        }
    }

    private Admin admin() {
        if (admin == null) {
            admin = Admin.create(settings);
        }
        return admin;
    }

    private void closeAdmin() {
        if (admin != null) {
            admin.close();
            admin = null;
        }
    }

    private static AclBinding binding(String text) {
        String[] f = fields(text);
        return new AclBinding(
                new ResourcePattern(ResourceType.fromString(f[0]), f[1], PatternType.fromString(f[2])),
                new AccessControlEntry(f[3], f[4], AclOperation.fromString(f[5]), AclPermissionType.fromString(f[6])));
    }

    private static AclBindingFilter filter(String text) {
        String[] f = fields(text);
        return new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.fromString(f[0]), orNull(f[1]), PatternType.fromString(f[2])),
                new AccessControlEntryFilter(orNull(f[3]), orNull(f[4]), AclOperation.fromString(f[5]),
                        AclPermissionType.fromString(f[6])));
    }

    private static String[] fields(String text) {
        String[] f = text.split(",", -1);
        if (f.length != 7) {
            throw new IllegalArgumentException("expected 7 comma-separated fields, got " + text);
        }
        return f;
    }

    private static String orNull(String field) {
        return field.equals("-") ? null : field;
    }

    private static List<Object> written(Collection<AclBinding> acls) {
        List<String> out = new ArrayList<>();
        for (AclBinding b : acls) {
            ResourcePattern p = b.pattern();
            AccessControlEntry e = b.entry();
            out.add(String.join(",", p.resourceType().name(), p.name(), p.patternType().name(), e.principal(),
                    e.host(), e.operation().name(), e.permissionType().name()));
        }
        out.sort(null);
        return new ArrayList<>(out);
    }

    private Map<String, Object> deleteAcls(String[] c) throws Exception {
        List<AclBindingFilter> filters = new ArrayList<>();
        for (int i = 1; i < c.length; i++) {
            filters.add(filter(c[i]));
        }
        Map<AclBindingFilter, KafkaFuture<DeleteAclsResult.FilterResults>> values =
                admin().deleteAcls(filters).values();
        List<Object> deleted = new ArrayList<>();
        for (AclBindingFilter f : filters) {
            List<AclBinding> bindings = new ArrayList<>();
            for (DeleteAclsResult.FilterResult r : values.get(f).get().values()) {
                if (r.exception() != null) {
                    throw r.exception();
                }
                bindings.add(r.binding());
            }
            deleted.add(written(bindings));
        }
        return Json.obj("deleted", deleted);
    }

    private Map<String, Object> alterScram(String[] c) throws Exception {
        List<UserScramCredentialAlteration> changes = new ArrayList<>();
        for (int i = 1; i < c.length; i++) {
            String[] f = c[i].split(",", -1);
            ScramMechanism mechanism = ScramMechanism.fromMechanismName(f[2]);
            if (f[0].equals("upsert")) {
                changes.add(new UserScramCredentialUpsertion(f[1],
                        new ScramCredentialInfo(mechanism, Integer.parseInt(f[3])), f[4]));
            } else {
                changes.add(new UserScramCredentialDeletion(f[1], mechanism));
            }
        }
        Map<String, Object> results = new LinkedHashMap<>();
        for (Map.Entry<String, KafkaFuture<Void>> e :
                admin().alterUserScramCredentials(changes).values().entrySet()) {
            results.put(e.getKey(), outcome(e.getValue()));
        }
        return Json.obj("results", results);
    }

    private Map<String, Object> describeScram(String[] c) throws Exception {
        List<String> users = new ArrayList<>();
        for (int i = 1; i < c.length; i++) {
            users.add(c[i]);
        }
        DescribeUserScramCredentialsResult result = users.isEmpty()
                ? admin().describeUserScramCredentials() : admin().describeUserScramCredentials(users);
        if (users.isEmpty()) {
            users.addAll(result.users().get());
            users.sort(null);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (String user : users) {
            try {
                UserScramCredentialsDescription d = result.description(user).get();
                List<Object> infos = new ArrayList<>();
                for (ScramCredentialInfo info : d.credentialInfos()) {
                    infos.add(Json.obj("mechanism", info.mechanism().mechanismName(), "iterations",
                            info.iterations()));
                }
                out.put(user, infos);
            } catch (ExecutionException e) {
                out.put(user, e.getCause().getClass().getSimpleName());
            }
        }
        return Json.obj("users", out);
    }

    private static Object outcome(KafkaFuture<Void> future) throws InterruptedException {
        try {
            future.get();
            return null;
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        }
    }

    private Map<String, Object> produce(String topic, int count, String prefix, Map<String, String> options)
            throws Exception {
        Properties p = new Properties();
        p.putAll(settings);
        p.remove("default.api.timeout.ms");
        p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("acks", "all");
        p.put("max.block.ms", "15000");
        p.put("delivery.timeout.ms", "20000");
        p.put("request.timeout.ms", "10000");
        p.putAll(options);
        List<Object> offsets = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++) {
                offsets.add(producer.send(new ProducerRecord<>(topic, 0, null, prefix + "-" + i))
                        .get(30, TimeUnit.SECONDS).offset());
            }
        }
        return Json.obj("offsets", offsets);
    }
}
