from cdcsync.config.loader import load_config
from cdcsync.config.model import Config, MaskConfig, RouteConfig, RunConfig, SchemaConfig, SinkConfig, SourceConfig

__all__ = ["load_config", "Config", "SourceConfig", "SinkConfig", "RunConfig", "SchemaConfig", "RouteConfig",
           "MaskConfig"]
