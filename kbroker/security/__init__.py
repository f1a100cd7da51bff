"""Kafka's security model: TLS listeners, SASL logins, ACLs (StandardAuthorizer semantics) and client quotas.

principal.py     KafkaPrincipal and ssl.principal.mapping.rules
settings.py      each listener's security settings, from the broker config (Kafka's names)
tls.py           SSL contexts from PEM/PKCS12 stores, reloaded when their files change
jaas.py          sasl.jaas.config's syntax
scram.py         SCRAM credentials (stored hashed) and the --add-scram syntax
sasl.py          the server side of PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER (oauth.py: JWTs against a JWKS)
session.py       one connection's security state: listener, principal, login, re-authentication deadline
acl.py           ACL bindings, filters and the authorization rules (pure)
authorizer.py    the authorizer every handler asks through RequestContext.authorize
quotas.py        client quotas (produce/fetch byte rates, request percentage) and their throttle times
connections.py   max.connections, max.connections.per.ip
client.py        the client side (TLS + SASL) followers use to reach a leader's inter-broker listener
"""
