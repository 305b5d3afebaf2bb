// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

public record WriteResult(String path, String error) {
    public static WriteResult ok(String path) {
        return new WriteResult(path, null);
    }

    public static WriteResult fail(String error) {
        return new WriteResult(null, error);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
