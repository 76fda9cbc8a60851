"""Test suites shipped with the library for packages outside it: `contract` runs the engine
contract on any engine. The one part of nexmark that may import every layer (and pytest, which
it needs: `pip install 'nexmark[test]'`); nothing in the library imports it."""
