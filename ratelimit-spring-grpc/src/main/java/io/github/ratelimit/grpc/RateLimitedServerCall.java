package io.github.ratelimit.grpc;

import java.util.concurrent.atomic.AtomicBoolean;

import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.grpc.StatusException;
import org.jspecify.annotations.Nullable;

import org.springframework.web.ErrorResponseException;

/**
 * One call of a rate limited gRPC method: decided before the service sees it (with its one message where the client
 * sends one, else as it starts), its rate-limit fields added to the response headers, and, once it ends however it
 * ends, settled from its final status and its concurrency slots given back. It ends when the service closes it, when
 * the service throws (Spring gRPC's exception handler, outside this interceptor, then closes it), when the client
 * cancels it or its deadline passes, and at the latest when gRPC says it is complete.
 * <p>
 * gRPC calls the listener's methods one at a time, and the service its call's; but a service may close the call on
 * another thread while the client cancels it, hence one atomic end.
 */
final class RateLimitedServerCall<ReqT, RespT> extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {

	private final RateLimitEngine engine;

	private final GrpcServiceMethods.Target target;

	private final GrpcRateLimitRequest request;

	private final Metadata requestHeaders;

	private final ServerCallHandler<ReqT, RespT> next;

	private final AtomicBoolean ended = new AtomicBoolean();

	private volatile @Nullable RateLimitOutcome outcome;

	private volatile Metadata rateLimitHeaders = new Metadata();

	private boolean headersSent;

	RateLimitedServerCall(RateLimitEngine engine, GrpcServiceMethods.Target target, ServerCall<ReqT, RespT> call,
			Metadata requestHeaders, GrpcRateLimitRequest request, ServerCallHandler<ReqT, RespT> next) {
		super(call);
		this.engine = engine;
		this.target = target;
		this.requestHeaders = requestHeaders;
		this.request = request;
		this.next = next;
	}

	/** Start the call: decided now if its client streams, else once its message came. */
	ServerCall.Listener<ReqT> start() {
		this.engine.settlement().settledByStack(this.request);
		LimitedListener listener = new LimitedListener();
		if (this.target.clientSendsOneMessage()) {
			super.request(1); // the service is not started yet: ask for the message it is decided with
		}
		else if (decide(null)) {
			listener.startService();
		}
		else {
			listener.rejected = true;
		}
		return listener;
	}

	/** Decide the call; a rejected one is closed. */
	private boolean decide(@Nullable ReqT message) {
		this.request.setMessage(message);
		RateLimitOutcome outcome = this.engine.decideMethod(this.target.method(), this.target.targetClass(),
				this.target.arguments(message), this.request);
		if (outcome == null) {
			return true;
		}
		this.outcome = outcome;
		this.rateLimitHeaders = GrpcResponses.headers(outcome);
		ErrorResponseException rejection = outcome.rejection();
		if (rejection == null) {
			return true;
		}
		StatusException closing = GrpcResponses.rejection(rejection);
		Metadata trailers = closing.getTrailers();
		close(closing.getStatus(), (trailers != null) ? trailers : new Metadata());
		return false;
	}

	@Override
	public void sendHeaders(Metadata headers) {
		headers.merge(this.rateLimitHeaders);
		this.headersSent = true;
		super.sendHeaders(headers);
	}

	@Override
	public void close(Status status, Metadata trailers) {
		if (!this.headersSent) {
			// Not trailers only: the rate-limit fields are headers, on a rejection and on an error too.
			sendHeaders(new Metadata());
		}
		super.close(status, trailers);
		end(status); // after the response: a cost settled after it may wait for the store
	}

	/** Settle what the call took, from its final status, and give back its slots; once. */
	void end(Status status) {
		if (this.ended.compareAndSet(false, true)) {
			RateLimitOutcome outcome = this.outcome;
			if (outcome != null && !outcome.isRejected()) {
				this.engine.settlement().settle(outcome, this.request, this.target.method(), null, null);
			}
			this.engine.settlement().settleRequestAsync(this.request, GrpcResponses.httpStatus(status));
			this.engine.settlement().releaseRequestAsync(this.request);
		}
	}

	/**
	 * The call's listener: holds the service back until the call is decided, starts it only if it is admitted, and
	 * ends the call when the service throws, when the client cancels, and when gRPC says the call is complete.
	 */
	private final class LimitedListener extends ServerCall.Listener<ReqT> {

		private ServerCall.@Nullable Listener<ReqT> service;

		private boolean rejected;

		@Override
		public void onMessage(ReqT message) {
			ServerCall.Listener<ReqT> service = this.service;
			if (service == null && !this.rejected) {
				if (!decide(message)) {
					this.rejected = true;
					return;
				}
				service = startService();
			}
			if (service != null) {
				ServerCall.Listener<ReqT> started = service;
				guarded(() -> started.onMessage(message)); // the service says what a second unary message is
			}
		}

		@Override
		public void onHalfClose() {
			if (!this.rejected) {
				// Without a message the service refuses the call itself, as it does any unary call without one.
				ServerCall.Listener<ReqT> service = (this.service != null) ? this.service : startService();
				guarded(service::onHalfClose);
			}
		}

		@Override
		public void onCancel() {
			Deadline deadline = Context.current().getDeadline();
			end((deadline != null && deadline.isExpired()) ? Status.DEADLINE_EXCEEDED : Status.CANCELLED);
			ServerCall.Listener<ReqT> service = this.service;
			if (service != null) {
				service.onCancel();
			}
		}

		@Override
		public void onComplete() {
			// Closed, and not by the service through this call: by the exception handler outside, after it threw.
			end(Status.UNKNOWN);
			ServerCall.Listener<ReqT> service = this.service;
			if (service != null) {
				service.onComplete();
			}
		}

		@Override
		public void onReady() {
			ServerCall.Listener<ReqT> service = this.service;
			if (service != null) {
				guarded(service::onReady);
			}
		}

		ServerCall.Listener<ReqT> startService() {
			ServerCall.Listener<ReqT> service;
			try {
				// A method whose client streams runs here, and may throw.
				service = RateLimitedServerCall.this.next.startCall(RateLimitedServerCall.this,
						RateLimitedServerCall.this.requestHeaders);
			}
			catch (RuntimeException | Error ex) {
				end(Status.fromThrowable(ex));
				throw ex;
			}
			this.service = service;
			if (isReady()) {
				guarded(service::onReady); // the transport said so before the service listened
			}
			return service;
		}

		/** What the service does; if it throws, the call ends with what it threw, which goes on to the handler. */
		private void guarded(Runnable serviceCode) {
			try {
				serviceCode.run();
			}
			catch (RuntimeException | Error ex) {
				end(Status.fromThrowable(ex));
				throw ex;
			}
		}

	}

}
