// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

import java.util.List;

public record LsResult(String error, List<FileInfo> entries) {
    public static LsResult success(List<FileInfo> entries) {
        return new LsResult(null, entries);
    }

    public static LsResult fail(String error) {
        return new LsResult(error, null);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
