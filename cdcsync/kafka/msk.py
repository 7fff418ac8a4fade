"""AWS_MSK_IAM, in the settings Amazon documents (`sasl.mechanism = AWS_MSK_IAM`, `software.amazon.msk.auth.iam.
IAMLoginModule required [awsProfileName=".."];`, `sasl.client.callback.handler.class = software.amazon.msk.auth.iam.
IAMClientCallbackHandler`), for both clients: Spark's Java client through the aws-msk-iam-auth jar, kafka-python
(planner, probe, infer-schema) through its own AWS_MSK_IAM mechanism (kafka/sasl/msk.py, which signs with botocore),
given the same credentials: the named profile's, else botocore's default chain (environment, ~/.aws, the instance's
role)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka.errors import KafkaError

from cdcsync.errors import ConfigError

if TYPE_CHECKING:
    from kafka.sasl.msk import AwsMskIamClient, SaslMechanismAwsMskIam

LOGIN_MODULE = "software.amazon.msk.auth.iam.IAMLoginModule"
CALLBACK_HANDLER = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
# IAMLoginModule options the planner honours; awsRoleArn & co. would give Spark credentials the planner lacks
OPTIONS = ("awsProfileName", "awsDebugCreds")


class CredentialsError(KafkaError):
    """No AWS credentials or region to sign with: found before anything is sent to the broker."""


def available() -> bool:
    try:
        import botocore.session  # noqa: F401 (kafka-python's AWS_MSK_IAM signs with it)
    except ImportError:
        return False
    return True


def check(p: dict[str, str], module: str | None, jaas: dict[str, str], origin: str) -> None:
    """Settings both clients can honour, or a config error naming the one they cannot."""
    if module not in (None, "IAMLoginModule"):
        raise ConfigError(f"{origin}: sasl.mechanism = AWS_MSK_IAM needs {LOGIN_MODULE} in sasl.jaas.config, not "
                          f"{module}", hint=f'set sasl.jaas.config = "{LOGIN_MODULE} required;"',
                          key="sasl.jaas.config")
    other = sorted(set(jaas) - set(OPTIONS))
    if other:
        raise ConfigError(f"{origin}: sasl.jaas.config sets {', '.join(other)} for IAMLoginModule; the offset planner "
                          f"(kafka-python) reads {' and '.join(OPTIONS)} only",
                          hint="name an AWS profile with awsProfileName (a role goes in that profile: role_arn and "
                               "source_profile in ~/.aws/config)", key="sasl.jaas.config")
    handler = p.get("sasl.client.callback.handler.class", CALLBACK_HANDLER).strip()
    if handler != CALLBACK_HANDLER:
        raise ConfigError(f"{origin}: sasl.client.callback.handler.class = {handler} with AWS_MSK_IAM",
                          hint=f"set it to {CALLBACK_HANDLER}, as Amazon documents",
                          key="sasl.client.callback.handler.class")
    check_protocol((p.get("security.protocol") or "").upper(), origin)
    if not available():
        raise ConfigError(f"{origin}: sasl.mechanism = AWS_MSK_IAM: the offset planner (kafka-python) signs with "
                          "botocore, which is not installed", hint="pip install 'cdcsync[msk]' (or botocore)",
                          key="sasl.mechanism")


def check_protocol(protocol: str, origin: str) -> None:
    if protocol != "SASL_SSL":
        raise ConfigError(f"{origin}: sasl.mechanism = AWS_MSK_IAM needs security.protocol = SASL_SSL (MSK's IAM "
                          "listeners are TLS, port 9098)", hint="set security.protocol = SASL_SSL",
                          key="security.protocol")


def java_settings(p: dict[str, str]) -> None:
    """What Amazon's client configuration sets, filled in where the config leaves it out."""
    p.setdefault("sasl.jaas.config", f"{LOGIN_MODULE} required;")
    p.setdefault("sasl.client.callback.handler.class", CALLBACK_HANDLER)


def mechanism(profile: str | None) -> type[SaslMechanismAwsMskIam]:
    """kafka-python's AWS_MSK_IAM mechanism class, signing with `profile`'s credentials (None: the default chain)."""
    from botocore.exceptions import BotoCoreError
    from botocore.session import Session
    from kafka.sasl.msk import AwsMskIamClient, SaslMechanismAwsMskIam

    class Mechanism(SaslMechanismAwsMskIam):
        def _build_client(self) -> AwsMskIamClient:
            who = f"AWS profile {profile}" if profile else "the default AWS credential chain"
            try:
                session = Session(profile=profile)
                credentials = session.get_credentials()
                region = session.get_config_variable("region")
            except BotoCoreError as e:
                raise CredentialsError(f"{who}: {e}") from None
            if credentials is None:
                raise CredentialsError(f"no AWS credentials from {who} (environment, ~/.aws/credentials, SSO, "
                                       "the instance's or task's role)")
            if not region:
                raise CredentialsError(f"no AWS region for {who}: set region in the profile or AWS_REGION")
            frozen = credentials.get_frozen_credentials()
            return AwsMskIamClient(host=self.host, access_key=frozen.access_key, secret_key=frozen.secret_key,
                                   region=region, token=frozen.token)

    return Mechanism


def install(profile: str | None) -> None:
    """kafka-python looks mechanisms up by name and passes them only its own settings, so the profile goes in the
    class it finds: one source (one profile) per process."""
    from kafka.sasl import register_sasl_mechanism

    register_sasl_mechanism("AWS_MSK_IAM", mechanism(profile), overwrite=True)
