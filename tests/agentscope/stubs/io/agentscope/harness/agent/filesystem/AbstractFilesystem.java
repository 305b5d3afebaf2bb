// Stand-in written for as-edit's tests: the same name and signatures as AgentScope's type.
package io.agentscope.harness.agent.filesystem;

import io.agentscope.core.agent.RuntimeContext;
import io.agentscope.harness.agent.filesystem.model.EditResult;
import io.agentscope.harness.agent.filesystem.model.FileDownloadResponse;
import io.agentscope.harness.agent.filesystem.model.FileUploadResponse;
import io.agentscope.harness.agent.filesystem.model.GlobResult;
import io.agentscope.harness.agent.filesystem.model.GrepResult;
import io.agentscope.harness.agent.filesystem.model.LsResult;
import io.agentscope.harness.agent.filesystem.model.ReadResult;
import io.agentscope.harness.agent.filesystem.model.WriteResult;
import java.util.List;
import java.util.Map;

public interface AbstractFilesystem {
    LsResult ls(RuntimeContext runtimeContext, String path);

    ReadResult read(RuntimeContext runtimeContext, String filePath, int offset, int limit);

    WriteResult write(RuntimeContext runtimeContext, String filePath, String content);

    EditResult edit(
            RuntimeContext runtimeContext,
            String filePath,
            String oldString,
            String newString,
            boolean replaceAll);

    GrepResult grep(RuntimeContext runtimeContext, String pattern, String path, String glob);

    GlobResult glob(RuntimeContext runtimeContext, String pattern, String path);

    List<FileUploadResponse> uploadFiles(
            RuntimeContext runtimeContext, List<Map.Entry<String, byte[]>> files);

    List<FileDownloadResponse> downloadFiles(RuntimeContext runtimeContext, List<String> paths);

    WriteResult delete(RuntimeContext runtimeContext, String path);

    WriteResult move(RuntimeContext runtimeContext, String fromPath, String toPath);

    boolean exists(RuntimeContext runtimeContext, String path);

    // The same contract as AgentScope's: null, blank, or a ".." segment (either separator).
    static void validatePath(String path) {
        if (path == null || path.isBlank()) {
            throw new IllegalArgumentException("Path must not be null or blank");
        }
        for (String segment : path.replace('\\', '/').split("/")) {
            if ("..".equals(segment)) {
                throw new IllegalArgumentException("Path traversal ('..') not allowed: " + path);
            }
        }
    }
}
