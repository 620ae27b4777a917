from ptbench.cli import main

main()
