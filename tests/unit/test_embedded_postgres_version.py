"""The embedded PostgreSQL's version: a data folder keeps the one that made it; a new one gets
GB_POSTGRES_VERSION, else 18 (the nearest to production's Aurora PostgreSQL 17)."""

import pytest

from gligabao.local.embedded_pg import PostgresVersionMismatch, embedded_postgres_version
from gligabao.settings import Settings


def made_by(folder, version: int) -> str:
    folder.mkdir(exist_ok=True)
    (folder / "PG_VERSION").write_text(f"{version}\n")
    return str(folder)


def test_a_new_data_folder_gets_18_unless_another_version_is_asked_for(tmp_path):
    assert embedded_postgres_version(str(tmp_path / "pgdata")) == 18
    assert embedded_postgres_version(str(tmp_path / "pgdata"), requested=16) == 16


def test_a_data_folder_made_by_16_keeps_being_served_by_16(tmp_path):
    assert embedded_postgres_version(made_by(tmp_path / "pgdata", 16)) == 16
    assert embedded_postgres_version(made_by(tmp_path / "pgdata", 16), requested=16) == 16


def test_asking_for_another_version_than_the_folders_names_both(tmp_path):
    folder = made_by(tmp_path / "pgdata", 16)

    with pytest.raises(
        PostgresVersionMismatch, match=r"made by PostgreSQL 16, not 18 \(GB_POSTGRES_VERSION\)"
    ):
        embedded_postgres_version(folder, requested=18)


def test_the_version_asked_for_is_gb_postgres_version():
    assert Settings.from_env({"GB_POSTGRES_VERSION": "16"}).postgres_version == 16
    assert Settings.from_env({}).postgres_version is None
