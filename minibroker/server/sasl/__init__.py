"""SASL mechanisms (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER) and the credentials they check, sans-IO.

`mechanism.py` is the interface (new_sasl_server, SaslServer, the errors); `credentials.py` the
PLAIN users and SCRAM credentials; `jaas.py` Kafka's JAAS config grammar.
"""
