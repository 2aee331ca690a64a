"""Sans-IO broker state: cluster, partition logs, producer state, configs, clock."""
