from cdcsync.cli.app import main

main()
