"""Build hook: versions.env, where the repository pins its JVM versions once, rides in the package as
cdcsync/versions.env, copied at build time rather than kept twice (cdcsync/toolchain/jars.py reads either)."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

VERSIONS = Path(__file__).resolve().with_name("versions.env")


class BuildPy(build_py):
    def run(self):
        super().run()
        if not self.editable_mode:  # an editable install reads the repository's own file
            self.copy_file(str(VERSIONS), str(Path(self.build_lib) / "cdcsync" / "versions.env"))


setup(cmdclass={"build_py": BuildPy})
