"""The settings read by pydantic-settings, for values only its parsing reads exactly.

:func:`annactl.core.config.load_settings` takes this way when
:func:`annactl.core.quicksettings.raw_values` declines (a list in an ``ANNA_*`` variable,
two spellings of one variable, an unknown key, a TOML file that does not parse) or when the
plain model refuses the values: the errors people see (``CONFIG_INVALID``) come from here.
"""

from __future__ import annotations

from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from annactl.core.clientsettings import ClientSettings
from annactl.core.quicksettings import config_file


class EnvSettings(BaseSettings, ClientSettings):
    """:class:`ClientSettings` read from ``ANNA_*`` variables and the TOML file."""

    model_config = SettingsConfigDict(env_prefix="ANNA_", extra="forbid", validate_default=True)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then ``ANNA_*`` variables, then the TOML file."""
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file())
        return (init_settings, env_settings, toml)
