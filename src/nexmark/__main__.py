from nexmark.cli.app import main

main()
