package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.observation.DefaultRateLimitObservationConvention;
import io.github.ratelimit.observation.RateLimitObservationContext;
import io.github.ratelimit.observation.RateLimitObservationConvention;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The limiter, each decision observed ({@code ratelimit.decision}: a timer, and a span where tracing is on) when an
 * observation registry is configured.
 */
final class ObservedLimiter {

	private static final RateLimitObservationConvention DEFAULT_CONVENTION = new DefaultRateLimitObservationConvention();

	private final RateLimiter rateLimiter;

	private final ObservationRegistry registry;

	private final @Nullable RateLimitObservationConvention convention;

	private final String storeName;

	/**
	 * Whether a decision's observation is opened in scope while the store decides: so that what a remote store does
	 * (a Redis command's span) is its child. The in-memory store does nothing observable, and a scope costs.
	 */
	private final boolean scoped;

	ObservedLimiter(RateLimiter rateLimiter, ObservationRegistry registry,
			@Nullable RateLimitObservationConvention convention) {
		this.rateLimiter = rateLimiter;
		this.registry = registry;
		this.convention = convention;
		this.storeName = storeName(rateLimiter.store());
		this.scoped = !rateLimiter.store().isLocal();
	}

	RateLimiter rateLimiter() {
		return this.rateLimiter;
	}

	Decision decide(RateLimitPolicy policy, String key, long cost) {
		if (this.registry.isNoop()) {
			return this.rateLimiter.tryAcquire(policy, key, cost);
		}
		RateLimitObservationContext context = new RateLimitObservationContext(policy, this.storeName);
		Observation observation = Observation
			.createNotStarted(this.convention, DEFAULT_CONVENTION, () -> context, this.registry)
			.start();
		Observation.Scope scope = this.scoped ? observation.openScope() : null;
		try {
			Decision decision = this.rateLimiter.tryAcquire(policy, key, cost);
			context.setDecision(decision);
			return decision;
		}
		catch (RuntimeException ex) {
			observation.error(ex);
			throw ex;
		}
		finally {
			if (scope != null) {
				scope.close();
			}
			observation.stop();
		}
	}

	Admission decideAll(List<Acquisition> acquisitions, boolean shadow) {
		if (this.registry.isNoop()) {
			return this.rateLimiter.tryAcquireAll(acquisitions);
		}
		Observed observed = new Observed(acquisitions, shadow);
		// One scope, the first decision's, is what a remote store's calls (one script for all) belong to.
		Observation.Scope scope = observed.openScope();
		Admission admission = null;
		RuntimeException failure = null;
		try {
			admission = this.rateLimiter.tryAcquireAll(acquisitions);
			return admission;
		}
		catch (RuntimeException ex) {
			failure = ex;
			throw ex;
		}
		finally {
			if (scope != null) {
				scope.close();
			}
			observed.stop(admission, failure);
		}
	}

	/**
	 * Decide as {@link #decideAll} does, without waiting for the store: each observation stops when the decision
	 * completes, on whichever thread it completes.
	 */
	CompletionStage<Admission> decideAllAsync(List<Acquisition> acquisitions, boolean shadow) {
		if (this.registry.isNoop()) {
			return this.rateLimiter.tryAcquireAllAsync(acquisitions);
		}
		Observed observed = new Observed(acquisitions, shadow);
		CompletionStage<Admission> admission;
		// In scope while the store sends its calls, so that a remote store's command spans are its children.
		Observation.Scope scope = observed.openScope();
		try {
			admission = this.rateLimiter.tryAcquireAllAsync(acquisitions);
		}
		catch (RuntimeException ex) {
			admission = CompletableFuture.failedFuture(ex);
		}
		finally {
			if (scope != null) {
				scope.close();
			}
		}
		return admission.whenComplete((decided, failure) -> observed.stop(decided,
				(failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure));
	}

	/** The started observations of one all-or-nothing decision, one per acquisition. */
	private final class Observed {

		private final List<RateLimitObservationContext> contexts;

		private final List<Observation> observations;

		Observed(List<Acquisition> acquisitions, boolean shadow) {
			this.contexts = new ArrayList<>(acquisitions.size());
			this.observations = new ArrayList<>(acquisitions.size());
			for (Acquisition acquisition : acquisitions) {
				RateLimitObservationContext context = new RateLimitObservationContext(acquisition.policy(),
						ObservedLimiter.this.storeName);
				context.setShadow(shadow);
				this.contexts.add(context);
				this.observations.add(Observation
					.createNotStarted(ObservedLimiter.this.convention, DEFAULT_CONVENTION, () -> context,
							ObservedLimiter.this.registry)
					.start());
			}
		}

		Observation.@Nullable Scope openScope() {
			return ObservedLimiter.this.scoped ? this.observations.get(0).openScope() : null;
		}

		void stop(@Nullable Admission admission, @Nullable Throwable failure) {
			for (int i = 0; i < this.contexts.size(); i++) {
				Decision decision = (admission != null) ? admission.decision(i) : null;
				if (failure != null) {
					this.observations.get(i).error(failure);
				}
				else if (decision != null) {
					this.contexts.get(i).setDecision(decision);
				}
				else {
					this.contexts.get(i).setNotDecided();
				}
				this.observations.get(i).stop();
			}
		}

	}

	private static String storeName(RateLimitStore store) {
		String type = store.getClass().getSimpleName();
		return switch (type) {
			case "InMemoryRateLimitStore" -> "memory";
			case "RedisRateLimitStore" -> "redis";
			case "DynamoDbRateLimitStore" -> "dynamodb";
			default -> type;
		};
	}

}
