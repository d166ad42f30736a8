"""``python -m ember``: train an MLP and a CNN on the UCI digits and trace one training step
(see ``ember.demo``; ``python -m ember --help`` lists the options)."""

import signal

from ember.demo import main

if __name__ == "__main__":
    # a reader that closes the pipe early (``python -m ember | head``) ends the demo quietly,
    # with the status other command-line tools give, instead of a BrokenPipeError traceback
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    raise SystemExit(main())
