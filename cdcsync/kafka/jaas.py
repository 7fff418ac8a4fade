"""The JAAS line of `sasl.jaas.config`: its login module and options, read as Kafka's Java client reads them."""

from __future__ import annotations

import re

_JAAS_OPT = re.compile(r'([A-Za-z_][\w.\-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))')
# Java's default sasl.mechanism is GSSAPI; the login module tells us what the operator meant.
MODULE_MECHANISM = {"PlainLoginModule": "PLAIN", "OAuthBearerLoginModule": "OAUTHBEARER", "Krb5LoginModule": "GSSAPI",
                    "IAMLoginModule": "AWS_MSK_IAM"}


def parse_jaas(text: str) -> tuple[str | None, dict[str, str]]:
    """`org.apache...PlainLoginModule required username="u" password="p";` -> ("PlainLoginModule", options)."""
    head = text.strip().split(None, 1)
    module = head[0].rsplit(".", 1)[-1] if head else None
    opts = {m.group(1): (m.group(2) if m.group(2) is not None else m.group(3)) for m in _JAAS_OPT.finditer(text)}
    return module, {k: re.sub(r"\\(.)", r"\1", v) for k, v in opts.items()}


def escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
