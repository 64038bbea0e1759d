import sys

from neuronxsim.cli import main

sys.exit(main())
