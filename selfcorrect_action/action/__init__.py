"""The GitHub Action front end: the runner's environment and inputs read once, the trigger
dispatched to its handler, each run built with the same parts as `selfcorrect run`
(runs/), and every GitHub write planned and applied through github/."""
