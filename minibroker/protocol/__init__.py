"""Wire protocol: message classes, headers, error codes and RecordBatch v2 views."""
