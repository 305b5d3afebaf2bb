// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

public record GrepMatch(String path, int line, String text) {}
