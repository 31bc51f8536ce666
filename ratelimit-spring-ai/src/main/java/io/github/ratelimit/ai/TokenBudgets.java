package io.github.ratelimit.ai;

import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.engine.CurrentExchange;
import io.github.ratelimit.engine.PolicySpec;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import org.jspecify.annotations.Nullable;

/**
 * Budgets of model tokens, each a policy of {@code ratelimit.policies} that {@code ChatClient} calls draw through an
 * advisor:
 * <p>
 * {@snippet :
 * ChatClient chat = builder.defaultAdvisors(tokenBudgets.advisor("tokens")).build();
 * }
 * with, in {@code application.yml}, the budget and whose it is, SpEL over the call's advisor context:
 * {@snippet lang = "yaml" :
 * ratelimit:
 *   policies:
 *     tokens:
 *       limit: 100000
 *       window: 1h
 *       key: "#context['user']"   # chat.prompt(...).advisors((a) -> a.param("user", userId))
 * }
 * A budget is a token bucket unless configured otherwise (a sliding log also keeps a settled debt; a fixed window
 * would forgive it, and is refused). Its cost is the estimate ({@code cost: "#estimatedTokens"}) and it settles to
 * the usage ({@code settle: "#reported"}); like its algorithm, both may be configured otherwise.
 *
 * @since 0.5.0
 */
public final class TokenBudgets {

	private static final PolicyValues BUDGET = new PolicyValues("token budget",
			Map.of("algorithm", Algorithm.TOKEN_BUCKET, "cost", "#estimatedTokens", "settle", "#reported"));

	private final @Nullable RateLimitEngine engine;

	private final CurrentExchange currentExchange;

	/**
	 * Create the budgets.
	 * @param engine the engine that decides
	 * @param currentExchange the HTTP request being served on the calling thread, whose client a budget's key may
	 * name, or {@link CurrentExchange#NONE}
	 */
	public TokenBudgets(RateLimitEngine engine, CurrentExchange currentExchange) {
		this.engine = engine;
		this.currentExchange = currentExchange;
	}

	private TokenBudgets() {
		this.engine = null;
		this.currentExchange = CurrentExchange.NONE;
	}

	/**
	 * Return budgets that limit nothing: what the application gets with limits switched off
	 * ({@code ratelimit.enabled=false}), so that it starts and calls the model as before.
	 * @return the budgets
	 */
	public static TokenBudgets unlimited() {
		return new TokenBudgets();
	}

	/**
	 * Return an advisor that keeps calls within a policy's budget, estimating them with {@link TokenEstimator#DEFAULT}.
	 * @param policy the policy's name, configured under {@code ratelimit.policies}
	 * @return the advisor
	 * @throws io.github.ratelimit.engine.InvalidRateLimitPolicyException if the policy's configuration is invalid
	 */
	public TokenBudgetAdvisor advisor(String policy) {
		return advisor(policy, TokenEstimator.DEFAULT);
	}

	/**
	 * Return an advisor that keeps calls within a policy's budget.
	 * @param policy the policy's name, configured under {@code ratelimit.policies}
	 * @param estimator what a call is estimated to cost before the model is called
	 * @return the advisor
	 * @throws io.github.ratelimit.engine.InvalidRateLimitPolicyException if the policy's configuration is invalid
	 */
	public TokenBudgetAdvisor advisor(String policy, TokenEstimator estimator) {
		RateLimitEngine engine = this.engine;
		// A policy disabled when the advisor is built (ratelimit.policies.<name>.enabled=false) limits nothing.
		PolicySpec spec = (engine != null) ? engine.catalog()
			.declare(policy, "the token budget of chat calls under policy '" + policy + "'", BUDGET) : null;
		return new TokenBudgetAdvisor(policy, (spec != null) ? engine : null, spec, estimator, this.currentExchange);
	}

}
