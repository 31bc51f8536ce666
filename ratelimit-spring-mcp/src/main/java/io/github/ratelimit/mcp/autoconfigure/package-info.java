/**
 * Auto-configuration of {@code @RateLimited} on the tools of a Spring AI MCP server.
 */
@NullMarked
package io.github.ratelimit.mcp.autoconfigure;

import org.jspecify.annotations.NullMarked;
