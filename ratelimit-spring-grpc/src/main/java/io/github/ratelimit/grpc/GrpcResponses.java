package io.github.ratelimit.grpc;

import java.util.List;
import java.util.Map;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.rpc.QuotaFailure;
import com.google.rpc.RetryInfo;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.github.ratelimit.web.RateLimitException;
import io.github.ratelimit.web.RateLimitExceededException;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.protobuf.StatusProto;

import org.springframework.http.HttpHeaders;
import org.springframework.web.ErrorResponseException;

/**
 * What a call's client is told, in gRPC's terms: the rate-limit fields as response headers (the header draft forbids
 * them in trailers), a rejection as {@code RESOURCE_EXHAUSTED} (a store that failed under {@code deny}:
 * {@code UNAVAILABLE}; a cost the request makes invalid: {@code INVALID_ARGUMENT}) with a
 * {@code google.rpc.RetryInfo} and a {@code google.rpc.QuotaFailure} in the status's details; and the other way, a
 * call's final status as the HTTP status that {@code count-on} lists.
 */
final class GrpcResponses {

	/** google.rpc.Code to HTTP, as Google's APIs map them. */
	private static final Map<Status.Code, Integer> HTTP_STATUSES = Map.ofEntries(
			Map.entry(Status.Code.OK, 200), Map.entry(Status.Code.CANCELLED, 499), Map.entry(Status.Code.UNKNOWN, 500),
			Map.entry(Status.Code.INVALID_ARGUMENT, 400), Map.entry(Status.Code.DEADLINE_EXCEEDED, 504),
			Map.entry(Status.Code.NOT_FOUND, 404), Map.entry(Status.Code.ALREADY_EXISTS, 409),
			Map.entry(Status.Code.PERMISSION_DENIED, 403), Map.entry(Status.Code.UNAUTHENTICATED, 401),
			Map.entry(Status.Code.RESOURCE_EXHAUSTED, 429), Map.entry(Status.Code.FAILED_PRECONDITION, 400),
			Map.entry(Status.Code.ABORTED, 409), Map.entry(Status.Code.OUT_OF_RANGE, 400),
			Map.entry(Status.Code.UNIMPLEMENTED, 501), Map.entry(Status.Code.INTERNAL, 500),
			Map.entry(Status.Code.UNAVAILABLE, 503), Map.entry(Status.Code.DATA_LOSS, 500));

	private GrpcResponses() {
	}

	/** The HTTP status a call's final status stands for, as {@code count-on} lists them. */
	static int httpStatus(Status status) {
		return HTTP_STATUSES.getOrDefault(status.getCode(), 500);
	}

	/** The rate-limit fields of an outcome as response headers; a rejection's {@code Retry-After} too, as on HTTP. */
	static Metadata headers(RateLimitOutcome outcome) {
		Metadata metadata = new Metadata();
		HttpHeaders headers = new HttpHeaders();
		headers.putAll(outcome.headers());
		if (outcome.rejection() instanceof RateLimitException limit) {
			limit.applyRetryAfter(headers);
		}
		for (String name : headers.headerNames()) {
			Metadata.Key<String> key = GrpcRateLimitRequest.key(name);
			List<String> values = headers.get(name);
			if (key != null && values != null) {
				values.forEach((value) -> metadata.put(key, value));
			}
		}
		return metadata;
	}

	/** The status and trailers that close a rejected call. */
	static StatusException rejection(ErrorResponseException rejection) {
		Status.Code code = (rejection.getStatusCode().value() == 429) ? Status.Code.RESOURCE_EXHAUSTED
				: rejection.getStatusCode().is5xxServerError() ? Status.Code.UNAVAILABLE
						// A cost the request makes invalid (a count below 1): nothing was counted.
						: Status.Code.INVALID_ARGUMENT;
		String detail = rejection.getBody().getDetail();
		String message = (detail != null) ? detail : rejection.getBody().getTitle();
		com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder()
			.setCode(code.value())
			.setMessage((message != null) ? message : code.name());
		if (rejection instanceof RateLimitException limit) {
			long retryAfter = limit.getRetryAfterSeconds();
			if (retryAfter > 0) { // a concurrency limit's rejection says no time, as on HTTP
				status.addDetails(Any.pack(RetryInfo.newBuilder()
					.setRetryDelay(Duration.newBuilder().setSeconds(retryAfter))
					.build()));
			}
			if (limit instanceof RateLimitExceededException) {
				QuotaFailure.Builder failure = QuotaFailure.newBuilder();
				for (String policy : violatedPolicies(limit)) {
					failure.addViolations(QuotaFailure.Violation.newBuilder()
						.setSubject("policy:" + policy)
						.setDescription(status.getMessage()));
				}
				status.addDetails(Any.pack(failure.build()));
			}
		}
		return StatusProto.toStatusException(status.build());
	}

	/** Every policy that rejected the call, as the problem body names them. */
	private static List<String> violatedPolicies(RateLimitException limit) {
		Map<String, Object> properties = limit.getBody().getProperties();
		Object violated = (properties != null) ? properties.get("violated-policies") : null;
		if (violated instanceof List<?> names && !names.isEmpty()) {
			return names.stream().map(String::valueOf).toList();
		}
		return List.of(limit.getPolicy().name());
	}

}
