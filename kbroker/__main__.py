import sys

from kbroker.cli import main

sys.exit(main())
