// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

public record ReadResult(String error, FileData fileData) {
    public static ReadResult success(FileData fileData) {
        return new ReadResult(null, fileData);
    }

    public static ReadResult fail(String error) {
        return new ReadResult(error, null);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
