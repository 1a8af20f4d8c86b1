import sys

from fle_kms.cli import main

sys.exit(main())
