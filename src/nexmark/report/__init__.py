"""Reports made from results files only (never from the engine): HTML with charts, compare."""
