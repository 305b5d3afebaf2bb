// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

public record FileDownloadResponse(String path, byte[] content, String error) {
    public static FileDownloadResponse success(String path, byte[] content) {
        return new FileDownloadResponse(path, content, null);
    }

    public static FileDownloadResponse fail(String path, String error) {
        return new FileDownloadResponse(path, null, error);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
