// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.sandbox;

import io.agentscope.core.agent.RuntimeContext;
import io.agentscope.harness.agent.filesystem.AbstractFilesystem;
import io.agentscope.harness.agent.filesystem.model.ExecuteResponse;

public interface AbstractSandboxFilesystem extends AbstractFilesystem {
    String id();

    ExecuteResponse execute(RuntimeContext runtimeContext, String command, Integer timeoutSeconds);
}
