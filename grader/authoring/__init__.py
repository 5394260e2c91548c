"""An exercise's own quality, for its author: `meteor-kit audit` (docs/writing-an-exercise.md, "Auditing an exercise")."""
