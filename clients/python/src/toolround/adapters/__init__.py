"""Adapters of agent frameworks to toolround rounds (extras):
``toolround.adapters.langgraph`` (``pip install 'toolround[langgraph]'``) and
``toolround.adapters.openai_agents`` (``pip install 'toolround[openai-agents]'``)."""
