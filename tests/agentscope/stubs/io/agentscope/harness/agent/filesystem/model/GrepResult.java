// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

import java.util.List;

public record GrepResult(String error, List<GrepMatch> matches) {
    public static GrepResult success(List<GrepMatch> matches) {
        return new GrepResult(null, matches);
    }

    public static GrepResult fail(String error) {
        return new GrepResult(error, null);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
