// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

public record EditResult(String path, String error, Integer occurrences) {
    public static EditResult ok(String path, int occurrences) {
        return new EditResult(path, null, occurrences);
    }

    public static EditResult fail(String error) {
        return new EditResult(null, error, null);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
