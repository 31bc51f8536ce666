package io.github.ratelimit.ai;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.engine.CurrentExchange;
import io.github.ratelimit.engine.PolicySpec;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitExchange;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.github.ratelimit.web.RateLimitException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;

import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.api.CallAdvisor;
import org.springframework.ai.chat.client.advisor.api.CallAdvisorChain;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisor;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisorChain;
import org.springframework.ai.chat.metadata.Usage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.core.Ordered;
import org.springframework.web.ErrorResponseException;

/**
 * A {@code ChatClient} advisor that keeps the calls it advises within a budget of model tokens, a policy of
 * {@code ratelimit.policies}. Before the model is called it reserves the call's estimated tokens; a budget that cannot
 * cover them rejects the call at once with the policy's {@code RateLimitExceededException} (in a web request, a 429
 * with {@code Retry-After}), and the model is not called. Once the response says what the call cost (its usage's total
 * tokens), the reservation is settled to that: what was reserved beyond it is given back, what it cost beyond the
 * reservation is taken, into debt if need be, so that the next calls wait until the budget has repaid it.
 * <p>
 * A stream is settled when it ends however it ends: completed, failed or cancelled, to the usage it reported, else
 * to the estimate plus the completion it streamed (its characters estimated as tokens); a call that failed without a
 * usage, to the estimate; a call that another budget refused before the model, or whose subscriber left while this
 * budget was deciding, to nothing. The advisor runs first ({@link #getOrder()}), on the caller's thread, so that a
 * budget keyed by the HTTP client or its user is theirs; it estimates the prompt as the application gives it, and
 * what memory or retrieved documents add is settled from the usage.
 *
 * @since 0.5.0
 */
public final class TokenBudgetAdvisor implements CallAdvisor, StreamAdvisor {

	/**
	 * First, on the thread that makes the call: the HTTP request and the user it knows are the caller's there, before
	 * other advisors (memory, retrieval) move a stream to threads of their own.
	 */
	public static final int DEFAULT_ORDER = Ordered.HIGHEST_PRECEDENCE + 100;

	private final String name;

	private final @Nullable RateLimitEngine engine;

	private final @Nullable PolicySpec spec;

	private final TokenEstimator estimator;

	private final CurrentExchange currentExchange;

	/** An advisor of a policy, or one that limits nothing without an engine and a policy. */
	TokenBudgetAdvisor(String name, @Nullable RateLimitEngine engine, @Nullable PolicySpec spec,
			TokenEstimator estimator, CurrentExchange currentExchange) {
		this.name = name;
		this.engine = engine;
		this.spec = spec;
		this.estimator = estimator;
		this.currentExchange = currentExchange;
	}

	@Override
	public String getName() {
		return "token budget '" + this.name + "'";
	}

	@Override
	public int getOrder() {
		return DEFAULT_ORDER;
	}

	@Override
	public ChatClientResponse adviseCall(ChatClientRequest request, CallAdvisorChain chain) {
		if (this.engine == null) {
			return chain.nextCall(request);
		}
		Reservation reservation;
		try {
			reservation = reserve(request).join();
		}
		catch (CompletionException ex) {
			throw (ex.getCause() instanceof RuntimeException cause) ? cause : ex;
		}
		ChatClientResponse response;
		try {
			response = chain.nextCall(request);
		}
		catch (RuntimeException | Error ex) {
			reservation.failed(ex, 0);
			throw ex;
		}
		reservation.settle(usage(response.chatResponse()), completionCharacters(response.chatResponse()), true);
		return response;
	}

	@Override
	public Flux<ChatClientResponse> adviseStream(ChatClientRequest request, StreamAdvisorChain chain) {
		if (this.engine == null) {
			return chain.nextStream(request);
		}
		return Mono.defer(() -> {
			CompletableFuture<Reservation> reserving = reserve(request);
			AtomicBoolean streaming = new AtomicBoolean();
			return Mono.fromFuture(reserving, true)
				// The rest of the chain off the store's thread, which may be its client's event loop.
				.publishOn(Schedulers.boundedElastic())
				.doOnNext((reservation) -> streaming.set(true))
				// A subscriber that leaves while the store decides owes nothing: what it took is given back.
				.doOnCancel(() -> {
					if (!streaming.get()) {
						reserving.thenAccept((reservation) -> reservation.settleTo(0));
					}
				});
		})
			.flatMapMany((reservation) -> {
				AtomicReference<@Nullable Usage> usage = new AtomicReference<>();
				AtomicLong characters = new AtomicLong();
				AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
				return chain.nextStream(request).doOnNext((response) -> {
					Usage reported = usage(response.chatResponse());
					if (reported != null) {
						usage.set(reported);
					}
					characters.addAndGet(completionCharacters(response.chatResponse()));
				})
					.doOnError(failure::set)
					// The store is asked off the stream's thread, which may be an event loop.
					.doFinally((signal) -> Schedulers.boundedElastic().schedule(() -> {
						Throwable failed = failure.get();
						if (failed != null && usage.get() == null) {
							reservation.failed(failed, characters.get());
						}
						else {
							reservation.settle(usage.get(), characters.get(), signal == SignalType.ON_COMPLETE);
						}
					}));
			});
	}

	/** Reserve the call's estimate; a rejection fails the stage with the policy's exception. */
	private CompletableFuture<Reservation> reserve(ChatClientRequest request) {
		RateLimitEngine engine = Objects.requireNonNull(this.engine);
		PolicySpec spec = Objects.requireNonNull(this.spec);
		long estimate = Math.max(1, this.estimator.estimate(request));
		RateLimitExchange exchange = this.currentExchange.get();
		ChatRateLimitRequest limited = new ChatRateLimitRequest(request, (exchange != null) ? exchange.request() : null,
				estimate);
		return engine.decideKeyAsync(spec, null, limited).toCompletableFuture().thenApply((outcome) -> {
			ErrorResponseException rejection = outcome.rejection();
			if (rejection != null) {
				throw new CompletionException(rejection);
			}
			return new Reservation(engine, outcome, limited, estimate);
		});
	}

	private static @Nullable Usage usage(@Nullable ChatResponse response) {
		Usage usage = (response != null) ? response.getMetadata().getUsage() : null;
		Integer total = (usage != null) ? usage.getTotalTokens() : null;
		return (total != null && total > 0) ? usage : null; // a provider that reports none says 0
	}

	private static long completionCharacters(@Nullable ChatResponse response) {
		long characters = 0;
		if (response != null) {
			for (Generation generation : response.getResults()) {
				String text = generation.getOutput().getText();
				characters += (text != null) ? text.length() : 0;
			}
		}
		return characters;
	}

	/** What one call reserved, settled once. */
	private final class Reservation {

		private final RateLimitEngine engine;

		private final RateLimitOutcome outcome;

		private final ChatRateLimitRequest request;

		private final long estimate;

		Reservation(RateLimitEngine engine, RateLimitOutcome outcome, ChatRateLimitRequest request, long estimate) {
			this.engine = engine;
			this.outcome = outcome;
			this.request = request;
			this.estimate = estimate;
		}

		/**
		 * Settle a call that failed: to nothing if it never reached the model (a budget after this one refused it),
		 * else to the estimate plus what it streamed.
		 */
		void failed(Throwable failure, long completionCharacters) {
			if (failure instanceof RateLimitException && completionCharacters == 0) {
				settleTo(0);
			}
			else {
				settle(null, completionCharacters, false);
			}
		}

		/** Settle to a number of tokens. */
		void settleTo(long tokens) {
			this.request.report(TokenBudgetAdvisor.this.name, tokens);
			this.engine.settlement().settleCosts(this.outcome, this.request, null, false);
		}

		/** Settle to the usage, else to the estimate plus the completion's characters as tokens. */
		void settle(@Nullable Usage usage, long completionCharacters, boolean completed) {
			Integer total = (usage != null) ? usage.getTotalTokens() : null;
			long tokens = (total != null) ? total : this.estimate + (completionCharacters + 3) / 4;
			this.request.report(TokenBudgetAdvisor.this.name, tokens);
			this.engine.settlement().settleCosts(this.outcome, this.request, null, completed);
		}

	}

}
