from skillchat.cli.app import main

main()
