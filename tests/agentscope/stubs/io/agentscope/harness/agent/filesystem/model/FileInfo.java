// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

public record FileInfo(String path, boolean isDirectory, long size, String modifiedAt) {
    public static FileInfo ofFile(String path, long size, String modifiedAt) {
        return new FileInfo(path, false, size, modifiedAt != null ? modifiedAt : "");
    }

    public static FileInfo ofDir(String path, String modifiedAt) {
        return new FileInfo(path, true, 0, modifiedAt != null ? modifiedAt : "");
    }

    public static FileInfo ofFile(String path, long size, long lastModifiedMs) {
        return new FileInfo(path, false, size, java.time.Instant.ofEpochMilli(lastModifiedMs).toString());
    }

    public static FileInfo ofDir(String path, long lastModifiedMs) {
        return new FileInfo(path, true, 0, java.time.Instant.ofEpochMilli(lastModifiedMs).toString());
    }
}
