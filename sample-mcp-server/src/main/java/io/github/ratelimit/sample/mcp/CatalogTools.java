package io.github.ratelimit.sample.mcp;

import io.github.ratelimit.annotation.RateLimited;

import org.springframework.ai.mcp.annotation.McpTool;
import org.springframework.ai.mcp.annotation.McpToolParam;
import org.springframework.stereotype.Component;

/**
 * The server's tools. {@code application.yml} tunes each limit by name. Over a limit, the agent gets a tool result
 * with {@code isError} saying which limit and when to retry, and the tool does not run.
 */
@Component
public class CatalogTools {

	/** Cheap, but an agent in a loop calls it without end: a few calls a session, more for the whole client. */
	@McpTool(name = "search", description = "Search the product catalogue")
	@RateLimited(name = "search-per-session", key = "#session")
	@RateLimited(name = "search-per-client", key = "#principal.name")
	public String search(@McpToolParam(description = "What to look for") String query) {
		return "3 products match '" + query + "'";
	}

	/** Expensive by the page: each client has a budget of pages, whatever the sessions it spreads them over. */
	@McpTool(name = "report", description = "Build a sales report of the given number of pages")
	@RateLimited(name = "report-pages", key = "#principal.name", cost = "#pages")
	public String report(@McpToolParam(description = "Pages, 1 to 20") int pages) {
		return "A sales report of " + pages + " pages";
	}

}
