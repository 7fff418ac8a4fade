"""The folder of spark-submit's entry point (main.py): nothing else lives here, because spark-submit puts a script's
folder first on sys.path, where a module named like a standard one (cdcsync/secrets.py) would shadow it."""
