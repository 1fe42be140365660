"""Task families: one folder per family (its tasks' specs, how its items become round samples, its importer or
builder, its command-line sub-app). Core stages never import a family; they look a family up by task name in the
registry (`store.tasks`), which loads the built-in families and the `academiceval.families` entry points."""
