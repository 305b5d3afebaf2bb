// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

public record ExecuteResponse(String output, Integer exitCode, boolean truncated) {
    public boolean isSuccess() {
        return exitCode != null && exitCode == 0;
    }
}
