// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.core.agent;

public class RuntimeContext {
    private static final RuntimeContext EMPTY = new RuntimeContext();

    public static RuntimeContext empty() {
        return EMPTY;
    }
}
