"""``python -m ember``: train an MLP and a CNN on the UCI digits and trace one training step
(see ``ember.demo``; ``python -m ember --help`` lists the options)."""

from ember.demo import main

if __name__ == "__main__":
    raise SystemExit(main())
