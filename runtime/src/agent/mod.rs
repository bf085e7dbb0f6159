//! The agent loop (pi-agent-core): Agent, agent_loop, tool execution, steering and follow-ups.
