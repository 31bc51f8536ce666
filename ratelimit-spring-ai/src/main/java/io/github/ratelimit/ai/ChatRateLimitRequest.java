package io.github.ratelimit.ai;

import java.security.Principal;
import java.util.HashMap;
import java.util.Map;

import io.github.ratelimit.web.CallRateLimitRequest;
import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.RateLimitStatus;
import org.jspecify.annotations.Nullable;

import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.prompt.ChatOptions;

/**
 * A chat call as the engine sees a request. Key, tenant and skip expressions see the call ({@code #request}), its
 * advisor context ({@code #context['user']}), the model its options name ({@code #model}: its own, else the chat
 * model's configured one) and the estimate ({@code #estimatedTokens}, the default cost). Made within an HTTP request of a servlet
 * stack, the call has that request's client address, headers and principal, so that a budget keyed by the client's
 * address or user is the HTTP client's; outside of one, Spring Security's current user, and no address.
 */
final class ChatRateLimitRequest extends CallRateLimitRequest {

	private final ChatClientRequest call;

	private final long estimatedTokens;

	ChatRateLimitRequest(ChatClientRequest call, @Nullable RateLimitRequest http, long estimatedTokens) {
		super(http);
		this.call = call;
		this.estimatedTokens = estimatedTokens;
	}

	/** Report the tokens the call cost: what the policy's {@code settle = "#reported"} settles to. */
	void report(String policy, long tokens) {
		RateLimitStatus.of(this).settle(policy, tokens);
	}

	@Override
	public @Nullable Principal getUserPrincipal() {
		Principal principal = super.getUserPrincipal();
		return (principal != null) ? principal : SecurityPrincipal.current();
	}

	@Override
	public Object getNativeRequest() {
		return this.call;
	}

	@Override
	public Map<String, Object> getExpressionVariables() {
		Map<String, Object> variables = new HashMap<>();
		variables.put("context", this.call.context());
		ChatOptions options = this.call.prompt().getOptions();
		String model = (options != null) ? options.getModel() : null;
		if (model != null) {
			variables.put("model", model);
		}
		variables.put("estimatedTokens", this.estimatedTokens);
		return variables;
	}

}
