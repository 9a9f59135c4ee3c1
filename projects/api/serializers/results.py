"""A project's polls and its uptime over a range."""

from __future__ import annotations

from rest_framework import serializers

from projects.models import PollResult


class PollResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = PollResult
        fields = [
            "polled_at",
            "status",
            "status_code",
            "response_time_ms",
            "error_message",
            "dns_ms",
            "connect_ms",
            "tls_ms",
            "first_byte_ms",
        ]
        read_only_fields = fields


class UptimeSerializer(serializers.Serializer):
    range = serializers.CharField()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    uptime_percent = serializers.FloatField(
        allow_null=True,
        help_text="Up polls among those outside maintenance; null with none.",
    )
    polls = serializers.IntegerField()
    failures = serializers.IntegerField()
    maintenance_polls = serializers.IntegerField(
        help_text="Of the polls, those made during a maintenance window; "
        "uptime leaves them out."
    )
    mean_response_time_ms = serializers.FloatField(
        allow_null=True, help_text="Over the polls that got a response."
    )
    p50_ms = serializers.IntegerField(
        allow_null=True,
        help_text="Median response time, from the rollups' histograms "
        "(within 4 % of the exact value); null with no response.",
    )
    p90_ms = serializers.IntegerField(allow_null=True)
    p95_ms = serializers.IntegerField(allow_null=True)
    p99_ms = serializers.IntegerField(allow_null=True)
