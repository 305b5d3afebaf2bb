// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

public record FileUploadResponse(String path, String error) {
    public static FileUploadResponse success(String path) {
        return new FileUploadResponse(path, null);
    }

    public static FileUploadResponse fail(String path, String error) {
        return new FileUploadResponse(path, error);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
