// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem.model;

public record FileData(String content, String encoding, String createdAt, String modifiedAt) {
    public FileData(String content, String encoding) {
        this(content, encoding, null, null);
    }
}
