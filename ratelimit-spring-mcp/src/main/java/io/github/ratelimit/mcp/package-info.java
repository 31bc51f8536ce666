/**
 * The MCP entry point of the policy engine: {@code @RateLimited} on the tools of a Spring AI MCP server, each call of
 * a tool decided before the tool runs, a rejection answered as a tool result the agent reads. It decides nothing
 * itself: the engine does.
 */
@NullMarked
package io.github.ratelimit.mcp;

import org.jspecify.annotations.NullMarked;
