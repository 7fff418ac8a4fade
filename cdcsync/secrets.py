"""Which configuration keys hold secrets: the one rule for the config loader's messages and the Kafka client
properties' redaction (`cdcsync.kafka.security`). A secret value is never printed."""

from __future__ import annotations

_SECRET_PARTS = ("password", "secret", "jaas", "token", "credential", "private", "ssl.key", "keystore.key", "user_info",
                 "user.info")  # a registry's user_info is "user:password"
# A file path or a store type says where a secret is kept, not what it is; scrubbing "PEM" or a path would garble output
_NOT_SECRET_ENDINGS = (".location", ".type")


def is_secret_key(key: str) -> bool:
    """`sasl.jaas.config`, `ssl.key.password`, `ssl.keystore.key`, ... are secret; `ssl.key.location` is not."""
    k = key.lower()
    return any(s in k for s in _SECRET_PARTS) and not k.endswith(_NOT_SECRET_ENDINGS)
