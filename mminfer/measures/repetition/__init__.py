"""The rule `repetition`: repetition.json: the repetition penalty."""
