// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

import java.util.List;

public record GlobResult(String error, List<FileInfo> matches) {
    public static GlobResult success(List<FileInfo> matches) {
        return new GlobResult(null, matches);
    }

    public static GlobResult fail(String error) {
        return new GlobResult(error, null);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
